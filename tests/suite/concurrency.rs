//! Several conversations alive in one process at once, driven through the library the
//! way sub-agents, macros and the server will drive them: different models, roles,
//! sessions and MCP sets, one with a slow MCP tool, two on the same session. Replies are
//! routed by request content, not arrival order. Events, tool results, MCP servers and
//! saved sessions must never cross.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use loki::conversation::{Conversation, ConversationSpec};
use loki::state::AppState;
use loki_protocol::command::Command;
use loki_protocol::emitter::CollectingEmitter;
use loki_protocol::event::Event;
use loki_protocol::op::{RunOptions, UserInput};
use serde_json::{Value, json};

use super::mcp::server_bin;
use crate::common::TestEnv;
use crate::common::fake_llm::{Recorded, Reply, openai};

/// Which conversation a request belongs to: the tag its first user message starts with.
fn tag_of(request: &Value) -> String {
    request["messages"]
        .as_array()
        .and_then(|m| m.iter().find(|m| m["role"] == "user"))
        .and_then(|m| m["content"].as_str())
        .and_then(|c| c.split(':').next())
        .unwrap_or("?")
        .to_string()
}

fn route(request: &Recorded) -> Reply {
    let body = request.json();
    let last_is_tool = body["messages"]
        .as_array()
        .and_then(|m| m.last())
        .is_some_and(|m| m["role"] == "tool");
    let last_user = body["messages"]
        .as_array()
        .and_then(|m| m.iter().rev().find(|m| m["role"] == "user"))
        .and_then(|m| m["content"].as_str())
        .unwrap_or_default()
        .to_string();
    match (tag_of(&body).as_str(), last_is_tool) {
        ("A", false) => openai::tool_call_stream(&[("a1", "alpha_slow", "{}")]),
        ("A", true) => openai::text_stream(&["A done, arr"]),
        ("B", false) => openai::tool_call_stream(&[("b1", "beta_echo", r#"{"text":"bee"}"#)]),
        ("B", true) => openai::text_stream(&["B done"]),
        // C and D share a session: answer the latest question.
        _ if last_user.starts_with("C:") => openai::text_stream(&["C answer"]),
        _ if last_user.starts_with("D:") => openai::text_stream(&["D answer"]),
        _ => openai::text_stream(&["?"]),
    }
}

fn state_for(env: &TestEnv) -> Arc<AppState> {
    Arc::new(env.library_state())
}

/// What one conversation ended with.
struct Finished {
    id: String,
    answer: String,
    at: Instant,
}

/// Runs one conversation: `commands`, then `question`, then saves its session (holding
/// the session's lock throughout, as a one-shot run does).
async fn converse(
    state: Arc<AppState>,
    emitter: Arc<CollectingEmitter>,
    cwd: std::path::PathBuf,
    model: &'static str,
    commands: Vec<Command>,
    question: &'static str,
) -> Finished {
    let mut conversation = Conversation::open(
        &state,
        ConversationSpec {
            model: Some(model.into()),
            cwd: Some(cwd),
            commands,
            hold_session: true,
            ..ConversationSpec::default()
        },
    )
    .await
    .expect("model, commands and the session's lock");
    let input = UserInput {
        text: question.into(),
        ..UserInput::default()
    };
    let outcome = conversation
        .prompt(input, RunOptions::default(), None, emitter.as_ref())
        .await
        .unwrap_or_else(|e| panic!("{question}: {e}"));
    if conversation.status().session.is_some() {
        conversation
            .command(Command::SaveSession(None), emitter.as_ref())
            .await
            .expect("save");
    }
    let id = conversation.id().to_string();
    // Closing the conversation lets go of its session lock and its MCP servers.
    conversation.close(emitter.as_ref()).await;
    Finished {
        id,
        answer: outcome.text,
        at: Instant::now(),
    }
}

#[test]
fn conversations_in_one_process_never_cross() {
    let env = TestEnv::new();
    let cfg = std::fs::read_to_string(env.config_path()).unwrap();
    // Each conversation declares only its own MCP tools (no `task`: delegation off).
    env.write_config(&format!(
        "mcp_start_wait: 30\ndelegation: false\n{}",
        cfg.replace(
            "      - name: text-only",
            "      - name: other\n        supports_function_calling: true\n      - name: text-only"
        )
    ));
    let functions = env.config_dir().join("functions");
    std::fs::create_dir_all(&functions).unwrap();
    std::fs::write(
        functions.join("mcp.json"),
        json!({"mcpServers": {
            "alpha": {"type": "stdio", "command": server_bin()},
            "beta": {"type": "stdio", "command": server_bin()},
        }})
        .to_string(),
    )
    .unwrap();
    let roles = env.config_dir().join("roles");
    std::fs::create_dir_all(&roles).unwrap();
    std::fs::write(
        roles.join("pirate.md"),
        "---\nenabled_mcp_servers: alpha\n---\nYou are a pirate.\n",
    )
    .unwrap();
    env.server.respond_for("/v1/chat", route);

    let state = state_for(&env);
    let emitter = Arc::new(CollectingEmitter::new());
    let work = env.work_dir();
    // The binary's one-shot runtime: conversations beside the main one go to the pool.
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let started = Instant::now();
    let finished: Vec<Finished> = runtime.block_on(async {
        let spawn = |model, commands, question| {
            loki::conversation::tasks::spawn(converse(
                Arc::clone(&state),
                Arc::clone(&emitter),
                work.clone(),
                model,
                commands,
                question,
            ))
        };
        let a = spawn(
            "fake:gpt-4o-mini",
            vec![
                Command::OpenSession("sa".into()),
                Command::UseRole("pirate".into()),
            ],
            "A: take your time",
        );
        let b = spawn(
            "fake:other",
            vec![
                Command::OpenSession("sb".into()),
                Command::Set {
                    key: "enabled_mcp_servers".into(),
                    value: "beta".into(),
                },
            ],
            "B: echo something",
        );
        let c = spawn(
            "fake:gpt-4o-mini",
            vec![Command::OpenSession("shared".into())],
            "C: hello",
        );
        let d = spawn(
            "fake:other",
            vec![Command::OpenSession("shared".into())],
            "D: hello",
        );
        let mut out = Vec::new();
        for handle in [a, b, c, d] {
            out.push(handle.await.expect("conversation task"));
        }
        out
    });
    assert!(loki::conversation::tasks::pool_started());
    let [a, b, c, d] = <[Finished; 4]>::try_from(finished).ok().unwrap();
    assert_eq!(a.answer, "A done, arr");
    assert_eq!(b.answer, "B done");
    assert_eq!(c.answer, "C answer");
    assert_eq!(d.answer, "D answer");
    // They ran side by side: B finished while A's slow tool (1.2 s) was still running.
    assert!(b.at < a.at, "B should not wait for A");
    assert!(started.elapsed() < Duration::from_secs(20));

    // Events: grouped by conversation, each group is its own conversation's.
    let mut groups: HashMap<String, Vec<Event>> = HashMap::new();
    for envelope in emitter.envelopes() {
        groups
            .entry(envelope.conversation.to_string())
            .or_default()
            .push(envelope.event);
    }
    assert_eq!(groups.len(), 4, "{:?}", groups.keys());
    let text = |events: &[Event]| -> String {
        events
            .iter()
            .filter_map(|e| match e {
                Event::AssistantDelta(d) => Some(d.text.clone()),
                _ => None,
            })
            .collect()
    };
    for (finished, expected) in [
        (&a, "A done, arr"),
        (&b, "B done"),
        (&c, "C answer"),
        (&d, "D answer"),
    ] {
        let events = &groups[&finished.id];
        assert_eq!(text(events), expected);
        let starts = events
            .iter()
            .filter(|e| matches!(e, Event::TurnStarted(_)))
            .count();
        let ends = events
            .iter()
            .filter(|e| matches!(e, Event::TurnFinished(_) | Event::TurnAborted(_)))
            .count();
        assert_eq!((starts, ends), (1, 1), "{}: {events:?}", finished.id);
    }
    let results = |events: &[Event]| -> Vec<(String, String)> {
        events
            .iter()
            .filter_map(|e| match e {
                Event::ToolCallFinished(done) => Some((done.call_id.clone(), done.result.clone())),
                _ => None,
            })
            .collect()
    };
    assert_eq!(
        results(&groups[&a.id]),
        [("a1".to_string(), "slow done".to_string())]
    );
    assert_eq!(
        results(&groups[&b.id]),
        [("b1".to_string(), "echo: bee".to_string())]
    );
    assert!(results(&groups[&c.id]).is_empty() && results(&groups[&d.id]).is_empty());
    // Progress of A's slow call reached A only.
    let progress = |events: &[Event]| {
        events
            .iter()
            .filter(|e| matches!(e, Event::ToolCallProgress(_)))
            .count()
    };
    assert!(progress(&groups[&a.id]) > 0);
    assert_eq!(progress(&groups[&b.id]), 0);

    // Requests: each conversation sent its own model, role and tools.
    for request in env.server.requests() {
        let body = request.json();
        let tools: Vec<String> = body["tools"]
            .as_array()
            .map(|t| {
                t.iter()
                    .map(|t| t["function"]["name"].as_str().unwrap().to_string())
                    .collect()
            })
            .unwrap_or_default();
        match tag_of(&body).as_str() {
            "A" => {
                assert_eq!(body["model"], "gpt-4o-mini");
                assert_eq!(body["messages"][0]["content"], "You are a pirate.");
                assert!(tools.iter().all(|t| t.starts_with("alpha_")), "{tools:?}");
            }
            "B" => {
                assert_eq!(body["model"], "other");
                assert!(tools.iter().all(|t| t.starts_with("beta_")), "{tools:?}");
                assert!(!body["messages"].to_string().contains("pirate"));
            }
            _ => assert!(tools.is_empty(), "{tools:?}"),
        }
    }

    // MCP servers: every lease was let go when its conversation ended.
    assert_eq!(state.mcp.holders("alpha"), 0);
    assert_eq!(state.mcp.holders("beta"), 0);

    // Sessions: each has its own messages; the shared one has both conversations'.
    let read = |name: &str| std::fs::read_to_string(env.session_file(name)).unwrap();
    let sa = read("sa");
    assert!(
        sa.contains("A: take your time") && sa.contains("A done, arr"),
        "{sa}"
    );
    assert!(!sa.contains("B:") && !sa.contains("C:"), "{sa}");
    let sb = read("sb");
    assert!(
        sb.contains("B: echo something") && sb.contains("echo: bee"),
        "{sb}"
    );
    assert!(!sb.contains("A:") && !sb.contains("pirate"), "{sb}");
    let shared = read("shared");
    for part in ["C: hello", "C answer", "D: hello", "D answer"] {
        assert!(shared.contains(part), "{part} lost: {shared}");
    }
}

#[test]
fn two_conversations_with_different_mcp_sets_never_stop_each_others_servers() {
    let env = TestEnv::new();
    let cfg = std::fs::read_to_string(env.config_path()).unwrap();
    env.write_config(&format!("mcp_start_wait: 30\n{cfg}"));
    let functions = env.config_dir().join("functions");
    std::fs::create_dir_all(&functions).unwrap();
    std::fs::write(
        functions.join("mcp.json"),
        json!({"mcpServers": {
            "alpha": {"type": "stdio", "command": server_bin()},
            "beta": {"type": "stdio", "command": server_bin()},
        }})
        .to_string(),
    )
    .unwrap();
    let state = state_for(&env);
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        let names = |list: &[&str]| {
            list.iter()
                .map(std::string::ToString::to_string)
                .collect::<Vec<_>>()
        };
        let (both, warnings) = state.mcp.acquire(&names(&["alpha", "beta"])).await;
        assert!(warnings.is_empty(), "{warnings:?}");
        let (only_beta, _) = state.mcp.acquire(&names(&["beta"])).await;
        assert_eq!(state.mcp.running(&names(&["alpha", "beta"])).len(), 2);
        // The first conversation moves on: alpha stops, beta is still held.
        drop(both);
        assert_eq!(state.mcp.running(&names(&["alpha"])).len(), 0);
        let beta = state.mcp.running(&names(&["beta"]));
        assert_eq!(beta.len(), 1);
        assert!(beta[0].is_alive());
        drop(only_beta);
        assert_eq!(state.mcp.running(&names(&["beta"])).len(), 0);
    });
}
