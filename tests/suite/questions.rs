//! Questions to the user beside approvals: the `user__*` conversation tools, answered at
//! the REPL's terminal, by a scripted asker through the library, and refused headless.

use std::sync::Arc;

use loki::conversation::{Conversation, ConversationSpec};
use loki::tool::ask::{Answer, Scripted};
use loki_protocol::emitter::CollectingEmitter;
use loki_protocol::event::Event;
use loki_protocol::event::Question;
use loki_protocol::op::{RunOptions, UserInput};

use super::mcp::tool_result;
use crate::common::TestEnv;
use crate::common::fake_llm::openai;
use crate::common::pty::Pty;

const PROMPT: &str = "fake:gpt-4o-mini)> ";

#[test]
fn the_repl_offers_user_tools_and_asks_at_the_terminal() {
    let env = TestEnv::new();
    env.server.push(openai::tool_call_stream(&[(
        "q1",
        "user__confirm",
        r#"{"question":"Deploy to production now?"}"#,
    )]));
    env.server.push(openai::text_stream(&["Deploying."]));
    let mut pty = Pty::spawn(&env, &[], &[("NO_COLOR", "1")]);
    pty.expect(PROMPT);
    pty.send("ship it\r");
    pty.expect("Deploy to production now?");
    pty.send("y\r");
    pty.expect("Deploying.");
    pty.expect(PROMPT);
    let requests = env.server.requests();
    let tools = requests[0].json()["tools"].to_string();
    for name in [
        "user__ask",
        "user__confirm",
        "user__input",
        "user__checkbox",
    ] {
        assert!(tools.contains(name), "{name} not offered: {tools}");
    }
    assert_eq!(tool_result(&env.server.last_request().json()), "yes");
}

#[test]
fn one_shot_runs_do_not_offer_user_tools() {
    let env = TestEnv::new();
    let cfg = std::fs::read_to_string(env.config_path()).unwrap();
    env.write_config(&format!("enabled_tools: fs_cat\n{cfg}"));
    env.server.push(openai::text_stream(&["ok"]));
    env.loki().arg("hi").assert().success();
    let tools = env.server.last_request().json()["tools"].to_string();
    assert!(
        tools.contains("fs_cat") && !tools.contains("user__"),
        "{tools}"
    );
}

/// A conversation through the library, with the `user__*` tools, answered by `asker`
/// (the headless one when none), and the runtime it runs on.
fn library_conversation(
    env: &TestEnv,
    asker: Option<Arc<dyn loki::tool::ask::Asker>>,
) -> (tokio::runtime::Runtime, Conversation) {
    let state = Arc::new(env.library_state());
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let spec = ConversationSpec {
        user_tools: true,
        asker,
        ..ConversationSpec::default()
    };
    let conversation = runtime.block_on(Conversation::open(&state, spec)).unwrap();
    (runtime, conversation)
}

fn ask(
    runtime: &tokio::runtime::Runtime,
    conversation: &mut Conversation,
    input: UserInput,
) -> CollectingEmitter {
    let emitter = CollectingEmitter::new();
    runtime
        .block_on(conversation.prompt(input, RunOptions::default(), None, &emitter))
        .unwrap();
    emitter
}

fn text(text: &str) -> UserInput {
    UserInput {
        text: text.into(),
        ..UserInput::default()
    }
}

#[test]
fn a_scripted_asker_answers_choices_and_records_who_asked() {
    let env = TestEnv::new();
    env.server.push(openai::tool_call_stream(&[(
        "q1",
        "user__checkbox",
        r#"{"question":"Which colours?","options":["red","green","blue"]}"#,
    )]));
    env.server.push(openai::text_stream(&["Noted."]));
    let asker = Arc::new(Scripted::new([Answer::Choices(vec![
        "red".into(),
        "blue".into(),
    ])]));
    let shared = Arc::clone(&asker) as Arc<dyn loki::tool::ask::Asker>;
    let (runtime, mut conversation) = library_conversation(&env, Some(shared));
    let events = ask(&runtime, &mut conversation, text("pick colours"));
    assert_eq!(
        tool_result(&env.server.last_request().json()),
        r#"["red","blue"]"#
    );
    let asked = asker.asked();
    assert_eq!(asked.len(), 1);
    assert_eq!(asked[0].0, conversation.id().to_string());
    assert_eq!(
        asked[0].1,
        Question::MultiSelect {
            prompt: "Which colours?".into(),
            options: vec!["red".into(), "green".into(), "blue".into()],
        }
    );
    assert!(events.events().iter().any(
        |e| matches!(e, Event::ToolCallFinished(done) if done.ok && done.name == "user__checkbox")
    ));
}

#[test]
fn without_anyone_to_answer_a_question_is_refused_with_a_reason() {
    let env = TestEnv::new();
    env.server.push(openai::tool_call_stream(&[(
        "q1",
        "user__input",
        r#"{"question":"Your name?"}"#,
    )]));
    env.server.push(openai::text_stream(&["I will guess."]));
    // The default asker is the headless one.
    let (runtime, mut conversation) = library_conversation(&env, None);
    let events = ask(&runtime, &mut conversation, text("greet me"));
    let finished = events
        .events()
        .into_iter()
        .find_map(|e| match e {
            Event::ToolCallFinished(done) => Some(done),
            _ => None,
        })
        .unwrap();
    assert!(!finished.ok);
    let error = finished.error.unwrap();
    assert_eq!(error.kind, "refused");
    assert!(
        error.message.contains("no one can answer"),
        "{}",
        error.message
    );
}

#[test]
fn ready_made_messages_join_the_conversation_before_the_prompt() {
    let env = TestEnv::new();
    env.server.push(openai::text_stream(&["Paris, still."]));
    let (runtime, mut conversation) = library_conversation(&env, None);
    let prior = vec![
        loki_wire::message::Message::text(loki_wire::message::Role::User, "capital of France?"),
        loki_wire::message::Message::text(loki_wire::message::Role::Assistant, "Paris."),
    ];
    let input = UserInput {
        text: "and now?".into(),
        prior,
        ..UserInput::default()
    };
    ask(&runtime, &mut conversation, input);
    let sent = env.server.last_request().json()["messages"].clone();
    let contents: Vec<&str> = sent
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["content"].as_str().unwrap())
        .collect();
    assert_eq!(contents, ["capital of France?", "Paris.", "and now?"]);
    assert_eq!(conversation.transcript().len(), 4);
}

/// Issue 26 item 15: a list question offers "Other (custom)", answered in the user's words.
#[test]
fn a_list_question_takes_an_answer_of_the_user_s_own() {
    let env = TestEnv::new();
    env.server.push(openai::tool_call_stream(&[(
        "q1",
        "user__ask",
        r#"{"question":"Which colour?","options":["red","blue"]}"#,
    )]));
    env.server.push(openai::text_stream(&["Teal it is."]));
    let mut pty = Pty::spawn(&env, &[], &[("NO_COLOR", "1")]);
    pty.expect(PROMPT);
    pty.send("paint it\r");
    pty.expect("Other (custom)");
    // Down twice to the last entry, then the answer.
    pty.send("\x1b[B");
    pty.send("\x1b[B");
    pty.send("\r");
    pty.expect("Your answer:");
    pty.send("teal, please\r");
    pty.expect("Teal it is.");
    pty.expect(PROMPT);
    assert_eq!(
        tool_result(&env.server.last_request().json()),
        "teal, please"
    );
}
