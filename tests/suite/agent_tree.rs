//! Trees of agents: sub-agent events in `stream-json`, the budget that stops a tree, the
//! task queue, messages between agents, questions escalated to the root (answered on a
//! terminal, by an `answer` line, by the root agent, or timing out), long answers
//! summarised, and the live view on a terminal.

use std::io::{BufRead, BufReader, Write};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::common::TestEnv;
use crate::common::fake_llm::{Recorded, Reply, openai};

pub(super) fn write_agent(env: &TestEnv, name: &str, config: &str) {
    let dir = env.config_dir().join("agents").join(name);
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("config.yaml"), config).unwrap();
}

/// `boss` (which may spawn, with `extra` settings) and `worker`.
fn team(extra: &str) -> TestEnv {
    let env = TestEnv::new();
    write_agent(
        &env,
        "boss",
        &format!("instructions: You are BOSS.\ncan_spawn_agents: true\n{extra}"),
    );
    write_agent(&env, "worker", "instructions: You are WORKER.\n");
    env
}

/// Who a request is from: `BOSS`, `WORKER` or `SUMMARY`.
fn who(body: &Value) -> &'static str {
    let system = body["messages"][0]["content"].as_str().unwrap_or_default();
    if body.to_string().contains("<agent_output>") {
        "SUMMARY"
    } else if system.contains("WORKER") {
        "WORKER"
    } else {
        "BOSS"
    }
}

/// The tool results in a request, parsed, in order.
fn results(body: &Value) -> Vec<Value> {
    body["messages"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|m| m["role"] == "tool")
        .map(|m| {
            let text = m["content"].as_str().unwrap_or_default();
            serde_json::from_str(text).unwrap_or_else(|_| Value::String(text.to_string()))
        })
        .collect()
}

/// The last user message of a request.
fn task(body: &Value) -> String {
    body["messages"]
        .as_array()
        .into_iter()
        .flatten()
        .rfind(|m| m["role"] == "user")
        .and_then(|m| m["content"].as_str())
        .unwrap_or_default()
        .to_string()
}

fn call(name: &str, args: &Value) -> Reply {
    openai::tool_call_stream(&[("call", name, &args.to_string())])
}

fn events(stdout: &str) -> Vec<Value> {
    stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect()
}

fn requests_of(env: &TestEnv, whom: &str) -> Vec<Value> {
    env.server
        .requests()
        .iter()
        .map(Recorded::json)
        .filter(|b| who(b) == whom)
        .collect()
}

#[test]
fn stream_json_shows_each_sub_agent_with_its_agent_and_parent() {
    let env = team("");
    env.server.respond_for("/v1/chat", |request| {
        let body = request.json();
        if who(&body) == "WORKER" {
            return openai::text_stream_with_usage(&["worker answer"], 10, 5);
        }
        let done = results(&body);
        match done.len() {
            0 => call(
                "agent__spawn",
                &json!({"agent": "worker", "prompt": "task A"}),
            ),
            1 => call("agent__collect", &json!({"id": done[0]["id"]})),
            _ => openai::text_stream(&[&format!("boss heard: {}", done[1]["output"])]),
        }
    });
    let out = env
        .loki()
        .args(["-a", "boss", "--output-format", "stream-json", "go"])
        .assert()
        .success();
    let events = events(&crate::common::stdout(&out));
    assert_eq!(events[0]["agent"], "boss");
    let boss = events[0]["conversation"].clone();
    let started = events
        .iter()
        .find(|e| e["type"] == "agent_started")
        .expect("agent_started");
    assert_eq!(started["agent"], "worker");
    assert_eq!(started["parent"], boss);
    assert_eq!(started["task"], "task A");
    let child = started["conversation"].clone();
    assert_ne!(child, boss);
    assert!(
        events.iter().any(|e| e["conversation"] == child
            && e["type"] == "turn_finished"
            && e["agent"] == "worker"
            && e["parent"] == boss),
        "the child's own run is in the stream"
    );
    let finished = events
        .iter()
        .find(|e| e["type"] == "agent_finished")
        .expect("agent_finished");
    assert_eq!(finished["status"], "completed");
    assert_eq!(finished["output"], "worker answer");
    assert_eq!(finished["tokens"], 15);
    assert_eq!(finished["id"], started["id"]);
    let last = events.last().unwrap();
    assert_eq!(last["type"], "turn_finished");
    assert_eq!(last["conversation"], boss);
}

#[test]
fn a_sub_agent_missing_a_variable_is_refused_and_the_parent_told_even_on_a_terminal() {
    let env = team("");
    write_agent(
        &env,
        "worker",
        "instructions: You are WORKER for {{username}}.\nvariables:\n  - name: username\n    description: whose work\n",
    );
    env.server.respond_for("/v1/chat", |request| {
        let body = request.json();
        match results(&body).first() {
            None => openai::tool_call_stream(&[(
                "s1",
                "agent__spawn",
                r#"{"agent":"worker","prompt":"do it"}"#,
            )]),
            Some(result) => openai::text_stream(&[&format!("boss heard: {result}")]),
        }
    });
    // On a terminal someone could answer, but the variable is the parent's to give.
    let mut pty = crate::common::pty::Pty::spawn(&env, &["-a", "boss", "go"], &[("NO_COLOR", "1")]);
    let seen = pty.expect("boss heard:");
    assert!(!seen.contains("whose work"), "the user was asked: {seen}");
    let rest = pty.read_to_end();
    assert!(rest.contains("username"), "{seen}{rest}");
    let asked: Vec<Recorded> = env.server.requests();
    assert!(
        asked.iter().all(|r| who(&r.json()) != "WORKER"),
        "the worker ran"
    );
}

#[test]
fn calls_a_spent_budget_stopped_say_so_not_that_the_user_cancelled() {
    let env = team("max_tokens: 5\n");
    env.server.push(openai::tool_call_stream(&[(
        "s1",
        "agent__spawn",
        r#"{"agent":"worker","prompt":"go"}"#,
    )]));
    let out = env
        .loki()
        .args(["-a", "boss", "--output-format", "stream-json", "go"])
        .assert()
        .code(1);
    let events = events(&crate::common::stdout(&out));
    let finished = events
        .iter()
        .find(|e| e["type"] == "tool_call_finished")
        .expect("tool_call_finished");
    let message = finished["error"]["message"].as_str().unwrap_or_default();
    assert!(
        message.starts_with("budget spent"),
        "{finished}\n{events:#?}"
    );
}

#[test]
fn a_budget_passed_by_the_final_answer_is_said_and_fails_the_run() {
    let env = team("max_tokens: 1000\n");
    env.server.push(openai::text_stream_with_usage(
        &["the whole answer"],
        900,
        200,
    ));
    let out = env.loki().args(["-a", "boss", "go"]).assert().code(1);
    assert_eq!(crate::common::stdout(&out), "the whole answer\n");
    let stderr = crate::common::stderr(&out);
    assert!(
        stderr.contains("budget spent: max_tokens 1000 reached (1100 used)"),
        "{stderr}"
    );
}

#[test]
fn a_spent_budget_stops_the_whole_tree_and_keeps_what_arrived() {
    let env = team("max_tokens: 1000\n");
    env.server.respond_for("/v1/chat", |request| {
        let body = request.json();
        if who(&body) == "WORKER" {
            return if task(&body).contains("fast") {
                openai::text_stream_with_usage(&["fast result"], 900, 200)
            } else {
                // Would take a minute.
                openai::text_stream(&["slow", " result"]).frame_delay(Duration::from_secs(30))
            };
        }
        let done = results(&body);
        match done.len() {
            0 => openai::tool_call_stream(&[
                (
                    "s1",
                    "agent__spawn",
                    r#"{"agent":"worker","prompt":"the slow part"}"#,
                ),
                (
                    "s2",
                    "agent__spawn",
                    r#"{"agent":"worker","prompt":"the fast part"}"#,
                ),
            ]),
            _ => openai::tool_call_stream(&[
                (
                    "c1",
                    "agent__collect",
                    &json!({"id": done[0]["id"]}).to_string(),
                ),
                (
                    "c2",
                    "agent__collect",
                    &json!({"id": done[1]["id"]}).to_string(),
                ),
            ]),
        }
    });
    let began = Instant::now();
    let out = env
        .loki()
        .args(["-a", "boss", "--output-format", "stream-json", "go"])
        .timeout(Duration::from_secs(60))
        .assert()
        .code(1);
    assert!(
        began.elapsed() < Duration::from_secs(15),
        "the slow child was not stopped: {:?}",
        began.elapsed()
    );
    let stderr = crate::common::stderr(&out);
    assert!(
        stderr.contains("budget spent: max_tokens 1000 reached (11"),
        "{stderr}"
    );
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    let events = events(&crate::common::stdout(&out));
    let spent = events
        .iter()
        .find(|e| e["type"] == "budget_exhausted")
        .expect("budget_exhausted");
    assert_eq!(spent["budget"], "max_tokens");
    assert_eq!(spent["agent"], "worker");
    let finished: Vec<&Value> = events
        .iter()
        .filter(|e| e["type"] == "agent_finished")
        .collect();
    assert_eq!(finished.len(), 2, "{finished:?}");
    assert!(
        finished
            .iter()
            .any(|f| f["status"] == "completed" && f["output"] == "fast result"),
        "{finished:?}"
    );
    assert!(
        finished.iter().any(|f| f["status"] != "completed"),
        "{finished:?}"
    );
    let boss = events[0]["conversation"].clone();
    let last = events.iter().rfind(|e| e["conversation"] == boss).unwrap();
    assert_eq!(last["type"], "turn_aborted");
    assert!(
        last["error"]
            .as_str()
            .unwrap()
            .starts_with("budget spent: max_tokens"),
        "{last}"
    );
}

#[test]
fn the_task_queue_starts_unblocked_tasks_and_completes_them_with_their_agents() {
    let env = team("");
    env.server.respond_for("/v1/chat", |request| {
        let body = request.json();
        if who(&body) == "WORKER" {
            return openai::text_stream(&[&format!("built: {}", task(&body))]);
        }
        let done = results(&body);
        match done.len() {
            0 => call("agent__task_create", &json!({"subject": "explore"})),
            1 => call(
                "agent__task_create",
                &json!({"subject": "build", "blocked_by": ["task_1"], "agent": "worker", "prompt": "build the thing"}),
            ),
            2 => call("agent__task_complete", &json!({"task_id": "task_1"})),
            3 => call(
                "agent__collect",
                &json!({"id": done[2]["dispatched"][0]["id"]}),
            ),
            4 => call("agent__task_list", &json!({})),
            _ => openai::text_stream(&["pipeline done"]),
        }
    });
    env.loki()
        .args(["-a", "boss", "go"])
        .assert()
        .success()
        .stdout(predicates::str::contains("pipeline done"));
    let boss = requests_of(&env, "BOSS");
    let done = results(boss.last().unwrap());
    assert_eq!(done[0]["task_id"], "task_1");
    assert_eq!(done[1]["task_id"], "task_2");
    assert_eq!(done[1]["dispatched"], json!([]), "blocked: not started");
    assert_eq!(done[2]["unblocked"], json!(["task_2"]));
    assert_eq!(done[2]["dispatched"][0]["agent"], "worker");
    assert_eq!(done[3]["status"], "completed");
    assert_eq!(done[3]["output"], "built: build the thing");
    let tasks = &done[4]["tasks"];
    assert_eq!(tasks[0]["status"], "completed");
    assert_eq!(tasks[1]["status"], "completed", "{tasks}");
    assert_eq!(tasks[1]["assigned_to"], done[2]["dispatched"][0]["id"]);
}

#[test]
fn agents_of_a_tree_send_each_other_messages() {
    let env = team("");
    let delivered = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let seen = std::sync::Arc::clone(&delivered);
    env.server.respond_for("/v1/chat", move |request| {
        let body = request.json();
        let done = results(&body);
        if who(&body) == "WORKER" {
            if done.is_empty() {
                // Look at the inbox only once the boss has written.
                let deadline = Instant::now() + Duration::from_secs(10);
                while !seen.load(std::sync::atomic::Ordering::SeqCst) && Instant::now() < deadline {
                    std::thread::sleep(Duration::from_millis(10));
                }
                return openai::tool_call_stream(&[
                    ("i1", "agent__check_inbox", "{}"),
                    (
                        "m1",
                        "agent__send_message",
                        r#"{"id":"parent","message":"found a bug in auth.rs"}"#,
                    ),
                ]);
            }
            let inbox = &done[0]["messages"][0];
            return openai::text_stream(&[&format!("inbox said: {}", inbox["message"])]);
        }
        if done.iter().any(|r| {
            r["status"] == "ok"
                && r["message"] == format!("delivered to {}", done[0]["id"].as_str().unwrap_or("-"))
        }) {
            seen.store(true, std::sync::atomic::Ordering::SeqCst);
        }
        match done.len() {
            0 => call(
                "agent__spawn",
                &json!({"agent": "worker", "prompt": "review"}),
            ),
            1 => call(
                "agent__send_message",
                &json!({"id": done[0]["id"], "message": "focus on auth"}),
            ),
            2 => call("agent__collect", &json!({"id": done[0]["id"]})),
            3 => call("agent__check_inbox", &json!({})),
            _ => openai::text_stream(&["reviewed"]),
        }
    });
    env.loki()
        .args(["-a", "boss", "go"])
        .assert()
        .success()
        .stdout(predicates::str::contains("reviewed"));
    let boss = requests_of(&env, "BOSS");
    let done = results(boss.last().unwrap());
    assert_eq!(done[2]["output"], "inbox said: \"focus on auth\"");
    assert_eq!(done[3]["messages"][0]["from"], done[0]["id"]);
    assert_eq!(done[3]["messages"][0]["message"], "found a bug in auth.rs");
    // The worker may message but not spawn.
    let worker = requests_of(&env, "WORKER");
    let tools: Vec<&str> = worker[0]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|t| t["function"]["name"].as_str())
        .filter(|n| n.starts_with("agent__"))
        .collect();
    assert_eq!(tools, ["agent__send_message", "agent__check_inbox"]);
}

/// A worker that asks `user__input` once, then answers with what it got.
fn asking_worker(body: &Value) -> Reply {
    let done = results(body);
    match done.first() {
        None => call("user__input", &json!({"question": "Which colour?"})),
        Some(answer) => {
            let answer = answer
                .as_str()
                .map_or_else(|| answer.to_string(), str::to_string);
            openai::text_stream(&[&format!("colour: {answer}")])
        }
    }
}

#[test]
fn an_escalated_question_is_answered_by_an_answer_line() {
    let env = team("");
    env.server.respond_for("/v1/chat", |request| {
        let body = request.json();
        if who(&body) == "WORKER" {
            return asking_worker(&body);
        }
        let done = results(&body);
        let last = done.last().cloned().unwrap_or_default();
        match done.len() {
            0 => call(
                "agent__spawn",
                &json!({"agent": "worker", "prompt": "paint"}),
            ),
            _ if last["status"] == "completed" => {
                openai::text_stream(&[&format!("boss: {}", last["output"])])
            }
            _ => call("agent__collect", &json!({"id": done[0]["id"]})),
        }
    });
    let mut child = env
        .loki_std()
        .args([
            "-a",
            "boss",
            "--input-format",
            "stream-json",
            "--output-format",
            "stream-json",
        ])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    writeln!(
        stdin,
        r#"{{"type":"user","message":{{"role":"user","content":"paint it"}}}}"#
    )
    .unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let mut seen = Vec::new();
    let question = loop {
        let line = lines.next().expect("a question before the end").unwrap();
        let event: Value = serde_json::from_str(&line).unwrap();
        seen.push(event.clone());
        if event["type"] == "question_asked" {
            break event;
        }
    };
    assert_eq!(question["prompt"], "Which colour?");
    assert_eq!(question["kind"], "text");
    assert_eq!(question["agent"], "worker");
    assert!(question["from"].as_str().unwrap().ends_with("(worker)"));
    // A person takes a moment to answer; the boss waits instead of asking again and again.
    std::thread::sleep(std::time::Duration::from_millis(1500));
    writeln!(
        stdin,
        r#"{{"type":"answer","question_id":{},"answer":"teal"}}"#,
        question["question_id"]
    )
    .unwrap();
    drop(stdin);
    for line in lines {
        seen.push(serde_json::from_str(&line.unwrap()).unwrap());
    }
    assert!(child.wait().unwrap().success());
    assert!(
        seen.iter()
            .any(|e| e["type"] == "question_answered" && e["outcome"] == "answered")
    );
    let worker = requests_of(&env, "WORKER");
    assert_eq!(results(worker.last().unwrap())[0], "teal");
    let boss = requests_of(&env, "BOSS");
    assert!(
        boss.len() <= 4,
        "the boss asked {} times while it waited",
        boss.len()
    );
    // One question, asked once (not once for the tree and once more for the input).
    let asked = seen
        .iter()
        .filter(|e| e["type"] == "question_asked")
        .count();
    assert_eq!(asked, 1, "{seen:?}");
    assert!(seen.iter().any(|e| e["type"] == "assistant_delta"
        && e["text"].as_str().unwrap_or("").contains("colour: teal")));
}

/// A boss whose worker asks "Which colour?"; the boss answers the escalation itself
/// (`crimson`) when `replies`, else only collects until the worker is done.
fn escalating_team(replies: bool, extra: &str) -> TestEnv {
    let env = team(extra);
    env.server.respond_for("/v1/chat", move |request| {
        let body = request.json();
        if who(&body) == "WORKER" {
            return asking_worker(&body);
        }
        let done = results(&body);
        let last = done.last().cloned().unwrap_or_default();
        if done.is_empty() {
            return call(
                "agent__spawn",
                &json!({"agent": "worker", "prompt": "paint"}),
            );
        }
        if last["status"] == "completed" {
            return openai::text_stream(&["boss done"]);
        }
        match last["pending_escalations"][0]["escalation_id"].as_str() {
            Some(id)
                if replies
                    && !done
                        .iter()
                        .any(|r| r["message"] == format!("answered {id}")) =>
            {
                call(
                    "agent__reply_escalation",
                    &json!({"escalation_id": id, "reply": "crimson"}),
                )
            }
            _ => call("agent__collect", &json!({"id": done[0]["id"]})),
        }
    });
    env
}

#[test]
fn the_root_agent_answers_an_escalation_and_an_unanswered_one_times_out() {
    // First the boss replies itself; in the second run nobody does.
    for replies in [true, false] {
        let env = escalating_team(replies, "escalation_timeout: 1\n");
        let out = env
            .loki()
            .args(["-a", "boss", "--output-format", "stream-json", "go"])
            .assert()
            .success();
        let events = events(&crate::common::stdout(&out));
        let boss = requests_of(&env, "BOSS");
        let seen: Vec<Value> = boss.iter().flat_map(results).collect();
        assert!(
            seen.iter()
                .any(|r| r["pending_escalations"][0]["question"] == "Which colour?"),
            "the boss was told: {seen:?}"
        );
        let worker = requests_of(&env, "WORKER");
        let answer = results(worker.last().unwrap())[0].to_string();
        let outcome = events
            .iter()
            .find(|e| e["type"] == "question_answered")
            .map(|e| e["outcome"].clone());
        if replies {
            assert!(answer.contains("crimson"), "{answer}");
            assert_eq!(outcome, Some(json!("answered")));
        } else {
            assert!(answer.contains("nobody answered within 1 s"), "{answer}");
            assert_eq!(outcome, Some(json!("timed_out")));
        }
    }
}

#[test]
fn a_long_answer_is_summarised_before_the_parent_reads_it() {
    let env = team("summarization_threshold: 100\n");
    env.server.respond_for("/v1/chat", |request| {
        let body = request.json();
        match who(&body) {
            "SUMMARY" => openai::text_stream(&["SHORT VERSION"]),
            "WORKER" => openai::text_stream(&[&"detail ".repeat(50)]),
            _ => {
                let done = results(&body);
                match done.len() {
                    0 => call("agent__spawn", &json!({"agent": "worker", "prompt": "dig"})),
                    1 => call("agent__collect", &json!({"id": done[0]["id"]})),
                    _ => openai::text_stream(&["ok"]),
                }
            }
        }
    });
    env.loki().args(["-a", "boss", "go"]).assert().success();
    let boss = requests_of(&env, "BOSS");
    let output = results(boss.last().unwrap())[1]["output"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(
        output.starts_with("[summary of a 350-character answer]\nSHORT VERSION"),
        "{output}"
    );
    let summary = requests_of(&env, "SUMMARY");
    assert_eq!(summary.len(), 1);
    assert!(summary[0].to_string().contains(&"detail ".repeat(50)));
}

/// Everything a terminal shows (scrollback, then the screen).
pub(super) fn screen_text(parser: &mut vt100::Parser) -> String {
    let screen = parser.screen_mut();
    screen.set_scrollback(usize::MAX);
    let back = screen.scrollback();
    let mut rows: Vec<String> = Vec::new();
    for k in (1..=back).rev() {
        screen.set_scrollback(k);
        rows.push(screen.rows(0, 80).next().unwrap_or_default());
    }
    screen.set_scrollback(0);
    rows.extend(screen.rows(0, 80));
    rows.join("\n")
}

#[test]
fn the_live_view_shows_running_children_then_one_summary_line() {
    use crate::common::pty::Pty;
    let env = team("");
    env.server.respond_for("/v1/chat", |request| {
        let body = request.json();
        if who(&body) == "WORKER" {
            let what = task(&body);
            return openai::text_stream(&[&format!("{what} finished")])
                .delay_headers(Duration::from_millis(1500));
        }
        let done = results(&body);
        match done.len() {
            0 => openai::tool_call_stream(&[
                (
                    "s1",
                    "agent__spawn",
                    r#"{"agent":"worker","prompt":"map the parser module"}"#,
                ),
                (
                    "s2",
                    "agent__spawn",
                    r#"{"agent":"worker","prompt":"read the tests"}"#,
                ),
            ]),
            2 => openai::tool_call_stream(&[
                (
                    "c1",
                    "agent__collect",
                    &json!({"id": done[0]["id"]}).to_string(),
                ),
                (
                    "c2",
                    "agent__collect",
                    &json!({"id": done[1]["id"]}).to_string(),
                ),
            ]),
            _ => openai::text_stream(&["Both workers reported."]),
        }
    });
    // A pseudo-terminal nobody sized (0 x 0, as `script` or an IDE's makes) still shows
    // it, at 80 columns.
    let mut zero = Pty::spawn(&env, &["-a", "boss", "go"], &[]);
    let _ = zero.session.get_process_mut().set_window_size(0, 0);
    zero.expect("2 running");
    zero.read_to_end();
    let mut pty = Pty::spawn(&env, &["-a", "boss", "go"], &[]);
    let mut parser = vt100::Parser::new(24, 80, 1000);
    let before = pty.expect("2 running");
    // Let a full frame arrive.
    let more = pty.expect("read the tests");
    parser.process(before.as_bytes());
    parser.process(more.as_bytes());
    let during = parser.screen().contents();
    let rows: Vec<&str> = during.lines().filter(|l| l.contains("worker ·")).collect();
    assert_eq!(rows.len(), 2, "{during}");
    assert!(
        rows.iter().any(|r| r.contains("map the parser module")),
        "{during}"
    );
    assert!(rows.iter().all(|r| r.chars().count() < 80), "{during}");
    let rest = pty.read_to_end();
    assert_eq!(pty.exit_code(), 0);
    parser.process(rest.as_bytes());
    let text = screen_text(&mut parser);
    assert!(text.contains("Both workers reported."), "{text}");
    assert_eq!(
        text.matches("✓ 2 agents finished").count(),
        1,
        "one summary line: {text}"
    );
    assert!(
        !text.contains("running, "),
        "the live rows were erased: {text}"
    );
    assert!(
        !text.contains("worker ·"),
        "the live rows were erased: {text}"
    );
}

#[test]
fn an_approved_command_shows_as_running_and_the_summary_line_always_closes_the_view() {
    use crate::common::pty::Pty;
    let env = TestEnv::new();
    write_agent(
        &env,
        "boss",
        "instructions: You are BOSS.\ncan_spawn_agents: true\n",
    );
    write_agent(
        &env,
        "worker",
        "instructions: You are WORKER.\nglobal_tools: [execute_command]\n",
    );
    env.server.respond_for("/v1/chat", |request| {
        let body = request.json();
        let done = results(&body);
        if who(&body) == "WORKER" {
            return match done.len() {
                0 => call(
                    "execute_command",
                    &json!({"command": "sleep 2; echo slept"}),
                ),
                _ => openai::text_stream(&["worker slept"]),
            };
        }
        match done.len() {
            0 => call("agent__spawn", &json!({"agent": "worker", "prompt": "nap"})),
            1 => call("agent__collect", &json!({"id": done[0]["id"]})),
            _ => openai::text_stream(&["boss done"]),
        }
    });
    // Colour on: the live view is drawn only where spinners are.
    let mut pty = Pty::spawn(&env, &["-a", "boss", "go"], &[]);
    pty.expect("Run it?");
    pty.send("\r");
    // While the command runs, its row says so (not "thinking").
    let running = pty.expect("⚙ execute_command");
    assert!(!running.contains("nap · thinking"), "{running}");
    let rest = pty.read_to_end();
    assert_eq!(pty.exit_code(), 0, "{rest}");
    assert!(rest.contains("boss done"), "{rest}");
    assert_eq!(rest.matches("✓ 1 agent").count(), 1, "{rest}");
}

#[test]
fn a_sub_agent_s_question_is_asked_on_the_terminal_with_its_name() {
    use crate::common::pty::Pty;
    let env = team("");
    env.server.respond_for("/v1/chat", |request| {
        let body = request.json();
        if who(&body) == "WORKER" {
            return asking_worker(&body);
        }
        let done = results(&body);
        let last = done.last().cloned().unwrap_or_default();
        match done.len() {
            0 => call(
                "agent__spawn",
                &json!({"agent": "worker", "prompt": "paint"}),
            ),
            _ if last["status"] == "completed" => {
                openai::text_stream(&[&format!("boss: {}", last["output"])])
            }
            _ => call("agent__collect", &json!({"id": done[0]["id"]})),
        }
    });
    let mut pty = Pty::spawn(&env, &["-a", "boss", "go"], &[("NO_COLOR", "1")]);
    let asked = pty.expect("Which colour?");
    assert!(asked.contains("(worker)]"), "{asked:?}");
    pty.send("olive\r");
    pty.expect("colour: olive");
    pty.read_to_end();
    assert_eq!(pty.exit_code(), 0);
}

/// Rows of the screen (and scrollback) that still show the question as asked.
fn open_question_rows(text: &str) -> Vec<&str> {
    text.lines()
        .filter(|l| l.contains("Which colour?") && !l.contains("no longer asked"))
        .collect()
}

#[test]
fn an_escalated_question_answered_by_the_root_agent_leaves_the_terminal() {
    use crate::common::pty::Pty;
    let env = escalating_team(true, "");
    let mut pty = Pty::spawn(&env, &["-a", "boss", "go"], &[("NO_COLOR", "1")]);
    let mut parser = vt100::Parser::new(24, 80, 1000);
    parser.process(pty.expect("Which colour?").as_bytes());
    let rest = pty.read_to_end();
    assert_eq!(pty.exit_code(), 0, "{rest}");
    parser.process(rest.as_bytes());
    let text = screen_text(&mut parser);
    assert!(text.contains("boss done"), "{text}");
    assert!(open_question_rows(&text).is_empty(), "{text}");
    assert!(
        !rest.contains("\x1b[?2026h\r\n? ["),
        "not drawn again: {rest:?}"
    );
    let worker = requests_of(&env, "WORKER");
    assert!(
        results(worker.last().unwrap())[0]
            .to_string()
            .contains("crimson")
    );
}

#[test]
fn a_timed_out_escalation_leaves_the_repl_its_keys() {
    use crate::common::pty::Pty;
    let env = escalating_team(false, "escalation_timeout: 1\n");
    let mut pty = Pty::spawn(&env, &["-a", "boss"], &[("NO_COLOR", "1")]);
    let mut parser = vt100::Parser::new(24, 80, 1000);
    pty.send("go\r");
    parser.process(pty.expect("Which colour?").as_bytes());
    parser.process(pty.expect("boss done").as_bytes());
    // Keys now reach the REPL, not a question nobody sees.
    std::thread::sleep(Duration::from_millis(300));
    pty.send(".exit\r");
    let rest = pty.read_to_end();
    assert_eq!(pty.exit_code(), 0, "{rest}");
    parser.process(rest.as_bytes());
    let text = screen_text(&mut parser);
    assert!(open_question_rows(&text).is_empty(), "{text}");
    let worker = requests_of(&env, "WORKER");
    assert!(
        results(worker.last().unwrap())[0]
            .to_string()
            .contains("nobody answered within 1 s")
    );
}

#[test]
fn between_turns_a_sub_agent_s_question_waits_for_the_next_turn() {
    use crate::common::pty::Pty;
    let env = team("");
    env.server.respond_for("/v1/chat", |request| {
        let body = request.json();
        if who(&body) == "WORKER" {
            let reply = asking_worker(&body);
            // It asks once the boss's turn is over.
            return if results(&body).is_empty() {
                reply.delay_headers(Duration::from_millis(1500))
            } else {
                reply
            };
        }
        let done = results(&body);
        let last = done.last().cloned().unwrap_or_default();
        match (task(&body).as_str(), done.len()) {
            ("go", 0) => call(
                "agent__spawn",
                &json!({"agent": "worker", "prompt": "paint"}),
            ),
            ("go", _) => openai::text_stream(&["boss done"]),
            _ if last["status"] == "completed" => {
                openai::text_stream(&[&format!("boss: {}", last["output"])])
            }
            _ => call("agent__collect", &json!({"id": done[0]["id"]})),
        }
    });
    let mut pty = Pty::spawn(&env, &["-a", "boss"], &[("NO_COLOR", "1")]);
    pty.send("go\r");
    pty.expect("boss done");
    // The worker asks now, while the prompt has the terminal: the question waits.
    std::thread::sleep(Duration::from_millis(2500));
    pty.send("next\r");
    let waited = pty.expect("Which colour?");
    assert!(
        waited.contains("next"),
        "asked only after the prompt: {waited:?}"
    );
    pty.send("olive\r");
    pty.expect("colour: olive");
    pty.send(".exit\r");
    let rest = pty.read_to_end();
    assert_eq!(pty.exit_code(), 0, "{rest}");
}

#[test]
fn the_repl_lists_sub_agents_shows_their_answers_and_deletes_agent_data() {
    use crate::common::pty::Pty;
    let env = team("");
    env.server.respond_for("/v1/chat", |request| {
        let body = request.json();
        if who(&body) == "WORKER" {
            return openai::text_stream(&["the worker's full answer"]);
        }
        let done = results(&body);
        match done.len() {
            0 => call(
                "agent__spawn",
                &json!({"agent": "worker", "prompt": "look around"}),
            ),
            1 => call("agent__collect", &json!({"id": done[0]["id"]})),
            _ => openai::text_stream(&["boss summary"]),
        }
    });
    let sessions = env.config_dir().join("agents/boss/sessions");
    std::fs::create_dir_all(&sessions).unwrap();
    std::fs::write(sessions.join("old.yaml"), "messages: []\n").unwrap();
    let mut pty = Pty::spawn(&env, &[], &[("NO_COLOR", "1")]);
    pty.expect("> ");
    pty.send(".agents\r");
    pty.expect("no sub-agents have run");
    pty.expect("> ");
    pty.send(".agent boss\r");
    pty.expect("boss>");
    pty.send("go\r");
    pty.expect("boss summary");
    pty.expect("boss>");
    pty.send(".agents\r");
    let listed = pty.expect("look around");
    assert!(
        listed.contains("1. worker completed (agent_worker_"),
        "{listed}"
    );
    pty.expect("boss>");
    pty.send(".agents 1\r");
    pty.expect("the worker's full answer");
    pty.expect("boss>");
    pty.send(".delete agent-data boss\r");
    pty.expect("agent `boss` is in use; .exit agent first");
    pty.expect("boss>");
    pty.send(".exit agent\r");
    pty.expect("agent: none (left boss)");
    // The prompt without the agent (`…boss>> ` above also holds a `> `).
    pty.expect("mini)> ");
    pty.send(".delete agent-data boss\r");
    pty.expect("agent `boss`: deleted 1 session file(s)");
    pty.expect("> ");
    pty.send(".exit\r");
    pty.read_to_end();
    assert!(!sessions.exists());
    assert!(env.config_dir().join("agents/boss/config.yaml").exists());
}

#[test]
fn a_cancelled_sub_agent_stops_at_once() {
    let env = team("");
    env.server.respond_for("/v1/chat", |request| {
        let body = request.json();
        if who(&body) == "WORKER" {
            return openai::text_stream(&["never", " seen"]).frame_delay(Duration::from_secs(30));
        }
        let done = results(&body);
        match done.len() {
            0 => call(
                "agent__spawn",
                &json!({"agent": "worker", "prompt": "slow work"}),
            ),
            1 => call("agent__cancel", &json!({"id": done[0]["id"]})),
            2 => call("agent__collect", &json!({"id": done[0]["id"]})),
            _ => openai::text_stream(&["stopped it"]),
        }
    });
    let began = Instant::now();
    env.loki()
        .args(["-a", "boss", "go"])
        .timeout(Duration::from_secs(60))
        .assert()
        .success()
        .stdout(predicates::str::contains("stopped it"));
    assert!(
        began.elapsed() < Duration::from_secs(15),
        "{:?}",
        began.elapsed()
    );
    let boss = requests_of(&env, "BOSS");
    let done = results(boss.last().unwrap());
    assert_eq!(done[1]["message"], "Cancelled agent 'worker'");
    assert_eq!(done[2]["status"], "cancelled", "{:?}", done[2]);
}

#[test]
fn the_live_view_survives_a_narrower_terminal() {
    use crate::common::pty::Pty;
    let env = team("");
    env.server.respond_for("/v1/chat", |request| {
        let body = request.json();
        if who(&body) == "WORKER" {
            return openai::text_stream(&["ok"]).delay_headers(Duration::from_millis(2500));
        }
        let done = results(&body);
        match done.len() {
            0 => openai::tool_call_stream(&[
                (
                    "s1",
                    "agent__spawn",
                    r#"{"agent":"worker","prompt":"a task described at quite some length so that its line is long"}"#,
                ),
                (
                    "s2",
                    "agent__spawn",
                    r#"{"agent":"worker","prompt":"another task, also described at some length to fill the line"}"#,
                ),
            ]),
            2 => openai::tool_call_stream(&[
                ("c1", "agent__collect", &json!({"id": done[0]["id"]}).to_string()),
                ("c2", "agent__collect", &json!({"id": done[1]["id"]}).to_string()),
            ]),
            _ => openai::text_stream(&["Finished."]),
        }
    });
    let mut pty = Pty::spawn(&env, &["-a", "boss", "go"], &[]);
    pty.expect("2 running");
    pty.expect(" tok ");
    // Narrow the terminal while the rows are drawn; the next frames fit the new width.
    let _ = pty.session.get_process_mut().set_window_size(40, 24);
    // Frames drawn before the resize are still being read; one drawn after it fits.
    let fits = (0..40).any(|_| {
        let frame = pty.expect("another");
        assert!(
            !frame.contains("agents finished"),
            "no frame fitted: {frame:?}"
        );
        frame
            .split(['\n', '\r'])
            .filter(|l| l.contains("worker · "))
            .map(|l| l.replace("\x1b[2m", "").replace("\x1b[0m", ""))
            .all(|l| l.chars().count() < 40)
    });
    assert!(fits, "the view never fitted 40 columns");
    let rest = pty.read_to_end();
    assert_eq!(pty.exit_code(), 0);
    // After the summary line, nothing of the view is left.
    let after = rest
        .rsplit_once("agents finished")
        .map(|(_, tail)| tail)
        .expect("a summary line");
    assert!(after.contains("Finished."), "{after:?}");
    assert!(!after.contains("worker · "), "{after:?}");
    assert!(!after.contains("running,"), "{after:?}");
}
