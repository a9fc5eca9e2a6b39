//! The conversation API as sub-agents and the server drive it: a parent conversation
//! starts three children that run at once with different models and MCP sets; one asks
//! for an approval that the parent's approver answers, labelled with the child; every
//! child event names its parent; cancelling the parent stops the whole tree at once,
//! leaves no tool process behind and releases every child's MCP lease. Replies are
//! routed by request content, not arrival order.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use futures_util::future::BoxFuture;
use loki::conversation::{Conversation, ConversationSpec};
use loki::error::CoreError;
use loki::state::AppState;
use loki::tool::approve::{ApprovalRequest, Approver};
use loki_protocol::command::Command;
use loki_protocol::emitter::CollectingEmitter;
use loki_protocol::event::Event;
use loki_protocol::op::Decision;
use loki_protocol::op::Op;
use loki_protocol::op::{RunOptions, UserInput};
use serde_json::{Value, json};

use super::mcp::server_bin;
use crate::common::TestEnv;
use crate::common::fake_llm::{Recorded, Reply, openai};

/// The tag of the conversation a request belongs to (its first user message's prefix)
/// and the last user message.
fn tag_and_last(body: &Value) -> (String, String) {
    let users: Vec<&str> = body["messages"]
        .as_array()
        .map(|m| {
            m.iter()
                .filter(|m| m["role"] == "user")
                .filter_map(|m| m["content"].as_str())
                .collect()
        })
        .unwrap_or_default();
    let tag = users
        .first()
        .and_then(|c| c.split(':').next())
        .unwrap_or("?");
    (
        tag.to_string(),
        users.last().copied().unwrap_or("").to_string(),
    )
}

fn route(request: &Recorded) -> Reply {
    let body = request.json();
    let after_tool = body["messages"]
        .as_array()
        .and_then(|m| m.last())
        .is_some_and(|m| m["role"] == "tool");
    let (tag, last) = tag_and_last(&body);
    let stage_two = last.contains("stage two");
    match (tag.as_str(), stage_two, after_tool) {
        ("K1", false, false) => openai::tool_call_stream(&[(
            "k1",
            "execute_command",
            r#"{"command":"echo approved > k1.txt"}"#,
        )]),
        ("K1", true, false) => {
            openai::tool_call_stream(&[("k1b", "execute_command", r#"{"command":"sleep 41"}"#)])
        }
        ("K2", false, false) => {
            openai::tool_call_stream(&[("k2", "alpha_echo", r#"{"text":"from alpha"}"#)])
        }
        ("K2", true, false) => openai::tool_call_stream(&[("k2b", "alpha_slow", "{}")]),
        ("K3", true, _) => openai::text_stream(&["K3 is thinking", " and thinking"]).hang_after(2),
        (tag, _, _) => openai::text_stream(&[&format!("{tag} done")]),
    }
}

/// The parent's approver: approves, and records who asked for which call.
#[derive(Default)]
struct Recorder(Mutex<Vec<(String, String)>>);

impl Approver for Recorder {
    fn approve<'a>(&'a self, request: &'a ApprovalRequest) -> BoxFuture<'a, Decision> {
        if let Ok(mut asked) = self.0.lock() {
            asked.push((request.from.clone(), request.call_id.clone()));
        }
        Box::pin(async { Decision::Approve })
    }
}

fn state_for(env: &TestEnv) -> Arc<AppState> {
    Arc::new(env.library_state())
}

fn setup() -> TestEnv {
    let env = TestEnv::new();
    let cfg = std::fs::read_to_string(env.config_path()).unwrap();
    env.write_config(&format!(
        "mcp_start_wait: 30\nenabled_tools: execute_command\n{}",
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
    env.server.respond_for("/v1/chat", route);
    env
}

fn ask(text: &str) -> UserInput {
    UserInput {
        text: text.into(),
        ..UserInput::default()
    }
}

/// Whether a process whose command line is `sleep 41` is alive.
fn sleeper_alive() -> bool {
    std::fs::read_dir("/proc")
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|entry| std::fs::read(entry.path().join("cmdline")).ok())
        .any(|cmdline| cmdline == b"sleep\x0041\x00")
}

#[test]
fn children_run_at_once_route_approvals_to_the_parent_and_stop_with_it() {
    let env = setup();
    let state = state_for(&env);
    let emitter = Arc::new(CollectingEmitter::new());
    let recorder = Arc::new(Recorder::default());
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        let cancel = tokio_util::sync::CancellationToken::new();
        let parent = Conversation::open(
            &state,
            ConversationSpec {
                approver: Some(recorder.clone()),
                cwd: Some(env.work_dir()),
                label: Some("lead".into()),
                cancel: Some(cancel.clone()),
                ..ConversationSpec::default()
            },
        )
        .await
        .expect("parent");
        let child = |label: &str, model: &str, mcp: &str| ConversationSpec {
            model: Some(model.into()),
            label: Some(label.into()),
            commands: vec![Command::Set {
                key: "enabled_mcp_servers".into(),
                value: mcp.into(),
            }],
            ..ConversationSpec::default()
        };
        let specs = [
            child("k1", "fake:gpt-4o-mini", "null"),
            child("k2", "fake:other", "alpha"),
            child("k3", "fake:text-only", "beta"),
        ];
        let mut children = Vec::new();
        for spec in specs {
            children.push(parent.child(spec).await.expect("child"));
        }
        let ids: Vec<String> = children.iter().map(|c| c.id().to_string()).collect();

        // Stage one: all three at once, each to the end.
        let run_all = |children: Vec<Conversation>, stage: &'static str| {
            children
                .into_iter()
                .enumerate()
                .map(|(i, mut child)| {
                    let emitter = Arc::clone(&emitter);
                    loki::conversation::tasks::spawn(async move {
                        let text = format!("K{}: {stage}", i + 1);
                        let result = child
                            .prompt(ask(&text), RunOptions::default(), None, emitter.as_ref())
                            .await;
                        (child, result.map(|outcome| outcome.text), Instant::now())
                    })
                })
                .collect::<Vec<_>>()
        };
        let mut back = Vec::new();
        for task in run_all(children, "stage one") {
            back.push(task.await.expect("child task"));
        }
        let answers: Vec<String> = back
            .iter()
            .map(|(_, r, _)| r.as_ref().expect("stage one").clone())
            .collect();
        assert_eq!(answers, ["K1 done", "K2 done", "K3 done"]);
        assert_eq!(
            std::fs::read_to_string(env.work_dir().join("k1.txt")).unwrap(),
            "approved\n"
        );
        assert_eq!(
            *recorder.0.lock().unwrap(),
            [(format!("lead › {} (k1)", ids[0]), "k1".to_string())],
            "only k1 asked, through the parent, labelled with the child"
        );
        assert!(state.mcp.holders("alpha") >= 1, "k2 holds alpha");

        // Every child event names its parent and its run.
        let envelopes = emitter.envelopes();
        for envelope in &envelopes {
            assert_eq!(
                envelope.parent.as_deref(),
                Some(parent.id().as_ref()),
                "{envelope:?}"
            );
            assert!(envelope.run.is_some(), "{envelope:?}");
        }
        let approvals: Vec<&Event> = envelopes
            .iter()
            .filter(|e| e.conversation.as_ref() == ids[0])
            .map(|e| &e.event)
            .filter(|e| {
                matches!(
                    e,
                    Event::ToolCallApprovalRequested(_) | Event::ToolCallApprovalDecided(_)
                )
            })
            .collect();
        assert!(
            matches!(approvals.as_slice(), [
                Event::ToolCallApprovalRequested(asked),
                Event::ToolCallApprovalDecided(decided),
            ] if asked.call_id == "k1" && asked.text.contains("echo approved > k1.txt")
                && decided.call_id == "k1" && decided.decision == "allow"),
            "{approvals:?}"
        );

        // Stage two: each child is busy (a shell command, a slow MCP call, a stalled
        // stream) when the parent is cancelled.
        let children: Vec<Conversation> = back.into_iter().map(|(c, _, _)| c).collect();
        let tasks = run_all(children, "stage two");
        let deadline = Instant::now() + Duration::from_secs(30);
        while !(sleeper_alive()
            && env
                .server
                .requests()
                .iter()
                .filter(|r| r.body_str().contains("stage two"))
                .count()
                >= 3)
        {
            assert!(Instant::now() < deadline, "the children never got busy");
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        // Let the MCP call reach its server.
        tokio::time::sleep(Duration::from_millis(300)).await;
        let cancelled_at = Instant::now();
        cancel.cancel();
        let mut stopped = Vec::new();
        for task in tasks {
            let done = tokio::time::timeout(Duration::from_secs(10), task)
                .await
                .expect("a child did not stop when its parent was cancelled");
            stopped.push(done.expect("child task"));
        }
        for (child, result, at) in &stopped {
            assert!(
                matches!(result, Err(CoreError::Cancelled)),
                "{}: {result:?}",
                child.id()
            );
            let took = at.duration_since(cancelled_at);
            assert!(
                took < Duration::from_millis(100),
                "{} took {took:?} to stop",
                child.id()
            );
        }
        drop(stopped);
        assert_eq!(state.mcp.holders("alpha"), 0, "k2's lease is released");
        assert_eq!(state.mcp.holders("beta"), 0);
        let gone = Instant::now() + Duration::from_secs(2);
        while sleeper_alive() {
            assert!(
                Instant::now() < gone,
                "`sleep 41` outlived its conversation"
            );
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        drop(parent);
    });
}

/// A sub-conversation given an environment of its own runs its tools in it: what an
/// agent sets for its tools (`LLM_AGENT_*`) never leaks to the process or its siblings.
#[test]
fn a_child_s_tools_run_in_the_child_s_environment() {
    let env = TestEnv::new();
    let cfg = std::fs::read_to_string(env.config_path()).unwrap();
    env.write_config(&format!("enabled_tools: execute_command\n{cfg}"));
    env.server.respond_for("/v1/chat", |request: &Recorded| {
        let body = request.json();
        let after_tool = body["messages"]
            .as_array()
            .and_then(|m| m.last())
            .is_some_and(|m| m["role"] == "tool");
        if after_tool {
            openai::text_stream(&["seen"])
        } else {
            openai::tool_call_stream(&[(
                "e1",
                "execute_command",
                r#"{"command":"printf 'mark=%s' \"$CHILD_MARK\""}"#,
            )])
        }
    });
    assert!(std::env::var_os("CHILD_MARK").is_none());
    let state = state_for(&env);
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        let parent = Conversation::open(
            &state,
            ConversationSpec {
                cwd: Some(env.work_dir()),
                yolo: true,
                ..ConversationSpec::default()
            },
        )
        .await
        .expect("parent");
        let mut vars: Vec<(String, String)> = state
            .env
            .pairs()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        vars.push(("CHILD_MARK".into(), "from-the-spec".into()));
        let mut child = parent
            .child(ConversationSpec {
                env: Some(Arc::new(loki::config::Env::from_pairs(vars))),
                ..ConversationSpec::default()
            })
            .await
            .expect("child");
        let emitter = CollectingEmitter::new();
        let outcome = child
            .prompt(ask("show the mark"), RunOptions::default(), None, &emitter)
            .await
            .expect("run");
        assert_eq!(outcome.text, "seen");
    });
    let sent = env.server.requests();
    let tool_result = sent
        .last()
        .and_then(|r| {
            r.json()["messages"]
                .as_array()
                .and_then(|m| m.last())
                .cloned()
        })
        .expect("a tool result was sent");
    assert!(
        tool_result["content"]
            .as_str()
            .is_some_and(|c| c.contains("mark=from-the-spec")),
        "{tool_result}"
    );
}

/// The user's decisions reach every descendant, also after it started: with `--yolo` a
/// child runs a command unasked; once the parent's user says `.set yolo false`, the same
/// child (opened before the change) asks, through the parent's approver, labelled with
/// itself. `.otr` on the parent makes the child off the record too.
#[test]
fn a_change_of_the_user_s_decisions_reaches_a_child_already_open() {
    let env = TestEnv::new();
    let cfg = std::fs::read_to_string(env.config_path()).unwrap();
    env.write_config(&format!("enabled_tools: execute_command\n{cfg}"));
    env.server.respond_for("/v1/chat", |request: &Recorded| {
        let body = request.json();
        let after_tool = body["messages"]
            .as_array()
            .and_then(|m| m.last())
            .is_some_and(|m| m["role"] == "tool");
        let (_, last) = tag_and_last(&body);
        if after_tool {
            openai::text_stream(&["ran"])
        } else {
            let id = if last.contains("second") { "s2" } else { "s1" };
            openai::tool_call_stream(&[(id, "execute_command", r#"{"command":"true"}"#)])
        }
    });
    let state = state_for(&env);
    let recorder = Arc::new(Recorder::default());
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        let mut parent = Conversation::open(
            &state,
            ConversationSpec {
                cwd: Some(env.work_dir()),
                yolo: true,
                approver: Some(Arc::clone(&recorder) as Arc<dyn Approver>),
                ..ConversationSpec::default()
            },
        )
        .await
        .expect("parent");
        let mut child = parent
            .child(ConversationSpec {
                label: Some("worker".into()),
                ..ConversationSpec::default()
            })
            .await
            .expect("child");
        let emitter = CollectingEmitter::new();
        child
            .submit(Op::prompt(ask("C: first")), &emitter)
            .await
            .expect("first run");
        assert!(
            recorder.0.lock().unwrap().is_empty(),
            "yolo: nothing is asked"
        );
        let set = Command::Set {
            key: "yolo".into(),
            value: "false".into(),
        };
        parent
            .submit(Op::Command(set), &emitter)
            .await
            .expect("set yolo");
        child
            .submit(Op::prompt(ask("C: second")), &emitter)
            .await
            .expect("second run");
        let asked = recorder.0.lock().unwrap().clone();
        assert_eq!(asked.len(), 1, "{asked:?}");
        assert_eq!(asked[0].1, "s2");
        assert!(asked[0].0.contains("(worker)"), "{asked:?}");

        assert!(!child.status().otr);
        parent
            .submit(Op::Command(Command::OffTheRecord), &emitter)
            .await
            .expect(".otr");
        assert!(child.status().otr, "the child follows the parent");
        let closed = child.close(&emitter).await;
        assert!(
            closed.failure.is_none() && closed.saved.is_ok(),
            "{closed:?}"
        );
        assert_eq!(
            closed.exit_status(loki::conversation::Outside::default()),
            0
        );
    });
}

/// An interrupt from another task (a `Remote`, as the ACP, SDK and stream-json readers
/// hold) stops the running turn; the conversation goes on, and `close` reports the
/// stop (exit status 130).
#[test]
fn a_remote_interrupt_stops_the_running_turn_only() {
    let env = TestEnv::new();
    env.server.respond_for("/v1/chat", |request: &Recorded| {
        let (_, last) = tag_and_last(&request.json());
        if last.contains("slow") {
            openai::text_stream(&["part one", " and more"]).hang_after(1)
        } else {
            openai::text_stream(&["quick answer"])
        }
    });
    let state = state_for(&env);
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        let mut conversation = Conversation::open(&state, ConversationSpec::default())
            .await
            .expect("open");
        let remote = conversation.remote();
        let emitter = CollectingEmitter::new();
        let interrupter = tokio::spawn(async move {
            tokio::time::sleep(Duration::from_millis(500)).await;
            remote.submit(Op::Interrupt).expect("interrupt");
        });
        let started = Instant::now();
        let slow = conversation
            .submit(Op::prompt(ask("slow one")), &emitter)
            .await;
        assert!(matches!(slow, Err(CoreError::Cancelled)), "{slow:?}");
        assert!(started.elapsed() < Duration::from_secs(20));
        interrupter.await.unwrap();
        let quick = conversation
            .prompt(ask("quick one"), RunOptions::default(), None, &emitter)
            .await
            .expect("the conversation goes on");
        assert_eq!(quick.text, "quick answer");
        let closed = conversation.close(&emitter).await;
        assert_eq!(
            closed.failure,
            Some(loki::conversation::Failure::Stopped),
            "{closed:?}"
        );
        assert_eq!(
            closed.exit_status(loki::conversation::Outside::default()),
            130
        );
    });
}

/// What a driver made for a conversation (its todo list) is the conversation's, and
/// what it reads comes in one status.
#[test]
fn a_driver_reads_its_own_todo_list_and_the_status() {
    let env = TestEnv::new();
    let state = state_for(&env);
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        let todo = Arc::new(Mutex::new(loki::tool::todo::TodoList::default()));
        let mut conversation = Conversation::open(
            &state,
            ConversationSpec {
                cwd: Some(env.work_dir()),
                todo: Some(Arc::clone(&todo)),
                // The todo tools are offered.
                auto_continue: true,
                ..ConversationSpec::default()
            },
        )
        .await
        .expect("conversation");
        let status = conversation.status();
        assert_eq!(status.cwd, env.work_dir());
        assert_eq!(status.history_len, 0);
        assert!(!status.otr);
        assert!(status.session.is_none());
        let emitter = CollectingEmitter::new();
        conversation
            .call_tool("todo__add", r#"{"task":"write the test"}"#, &emitter)
            .await
            .expect("todo__add");
        assert_eq!(
            todo.lock().unwrap().open(),
            1,
            "the driver's list got the item"
        );
        drop(conversation.close(&emitter).await);
    });
}
