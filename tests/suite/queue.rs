//! Prompt queueing in the REPL: a line typed while a turn runs goes in at the turn's next
//! step (after the tool results), is shown as queued, and what the turn did not take runs
//! after it; dot-commands wait for the prompt; an unfinished line comes back in the prompt.

use std::time::Duration;

use crate::common::TestEnv;
use crate::common::fake_llm::openai;
use crate::common::pty::Pty;

const PROMPT: &str = "fake:gpt-4o-mini)";

fn start(env: &TestEnv) -> Pty {
    let cfg = std::fs::read_to_string(env.config_path()).unwrap();
    env.write_config(&format!("enabled_tools: fs_cat\n{cfg}"));
    env.write("a.txt", "alpha");
    // Colours on: the spinner ("Generating") is drawn.
    let mut pty = Pty::spawn(env, &[], &[]);
    pty.expect(PROMPT);
    pty
}

#[test]
fn a_line_typed_during_a_tool_step_goes_into_the_same_turn() {
    let env = TestEnv::new();
    let mut pty = start(&env);
    // The tool call arrives late: there is time to type.
    env.server.push(
        openai::tool_call_stream(&[("c1", "fs_cat", r#"{"path":"a.txt"}"#)])
            .delay_headers(Duration::from_millis(1500)),
    );
    env.server.push(openai::text_stream(&["Both done."]));
    pty.send("read a.txt\r");
    pty.expect("Generating");
    pty.send("and say it twice\r");
    let shown = pty.expect("Both done.");
    assert!(
        shown.contains("queued: and say it twice (sent at the next step)"),
        "{shown}"
    );
    assert!(
        shown.contains("sent with the tool results: and say it twice"),
        "{shown}"
    );
    pty.expect(PROMPT);
    let requests = env.server.requests();
    assert_eq!(requests.len(), 2, "one turn, two model calls");
    let messages = requests[1].json()["messages"].as_array().unwrap().clone();
    let roles: Vec<&str> = messages
        .iter()
        .map(|m| m["role"].as_str().unwrap())
        .collect();
    assert_eq!(roles, ["user", "assistant", "tool", "user"], "{messages:?}");
    assert_eq!(messages[3]["content"], "and say it twice");
    // The history keeps it in place for the next turn.
    env.server.push(openai::text_stream(&["ok"]));
    pty.send("next\r");
    pty.expect("ok");
    pty.expect(PROMPT);
    let body = env.server.last_request().body_str();
    assert!(body.contains("and say it twice"), "{body}");
    pty.send("\x04");
    pty.read_to_end();
}

#[test]
fn what_the_turn_did_not_take_runs_after_it_and_an_unfinished_line_waits() {
    let env = TestEnv::new();
    let mut pty = start(&env);
    env.server.push(
        openai::text_stream(&["First ", "answer."]).delay_headers(Duration::from_millis(1500)),
    );
    env.server.push(openai::text_stream(&["Second answer."]));
    pty.send("hi\r");
    pty.expect("Generating");
    // A message, a dot-command and a line without Enter.
    pty.send("second question\r.info\rhalf typ");
    let shown = pty.expect("First answer.");
    assert!(!shown.contains("second question"), "echoed: {shown}");
    let after = pty.expect("Second answer.");
    assert!(after.contains("queued: second question"), "{after}");
    // `.info` ran after the second turn, then the prompt holds the unfinished line.
    pty.expect("queued: .info");
    pty.expect("model");
    pty.expect(PROMPT);
    pty.expect("half typ");
    let second = env.server.requests()[1].json();
    let last = second["messages"]
        .as_array()
        .unwrap()
        .last()
        .unwrap()
        .clone();
    assert_eq!(last["content"], "second question");
    pty.send("\x15\x04");
    pty.read_to_end();
}
