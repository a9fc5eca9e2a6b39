//! The test suite's fake provider server as a standalone process, for `scripts/bench` and
//! `scripts/link-layout`.
//!
//! `fake_server MODE <tokens>` answers every request with:
//! - `stream`: a streamed OpenAI answer of `<tokens>` one-word SSE events;
//! - `paced`: the same answer with one event every 5 ms (200 tokens a second, a fast
//!   provider), for what a stream costs while it waits;
//! - `json`: the same answer, not streamed;
//! - `code`: a streamed OpenAI answer holding Markdown and a fenced Rust block;
//! - `claude` / `gemini`: a short streamed answer in Anthropic's / Gemini's wire format;
//! - `echo`: a streamed answer of `<tokens>` pieces that starts with the last user message,
//!   so a load test can check every answer belongs to its request;
//! - `agents <delay_ms> [parts]`: an agent tree for `scripts/bench`. A request whose system
//!   prompt names `WORKER` is answered after `<delay_ms>` (spread over `[parts]` streamed
//!   pieces when given); any other request is the `boss`: asked `spawn N`, it spawns N
//!   workers in one response, collects them all in the next, then answers `done`.
//!
//! - `reader`: a model that reads `notes.txt` with `fs_cat` for every new question and then
//!   answers `It is lorem ipsum.`; summary requests get a one-line summary. `GET /stats`
//!   returns `{"requests": N, "bytes": B}` of the chat requests so far (the token-economy
//!   benchmark).
//!
//! Prints the base URL (`http://127.0.0.1:PORT/v1`) on the first line of stdout, then
//! serves until killed.
#![allow(clippy::print_stdout, clippy::unwrap_used, clippy::expect_used)]

#[path = "../tests/common/fake_llm/mod.rs"]
mod fake_llm;

use std::io::Write;

const CODE_ANSWER: &[&str] = &[
    "Here is a *small* example:\n\n",
    "```rust\nfn main() {\n    let words = [\"a\", \"b\"];\n",
    "    for w in words.iter() {\n        println!(\"{w}\");\n    }\n}\n```\n\n",
    "| key | value |\n|---|---|\n| a | 1 |\n\n",
    "1. first\n2. **second** with `code`\n\n> quoted\n",
];

fn main() {
    let mut args = std::env::args().skip(1);
    let mode = args.next().unwrap_or_else(|| "stream".into());
    let tokens: usize = args.next().and_then(|n| n.parse().ok()).unwrap_or(16);
    let server = fake_llm::FakeLlm::start();
    if mode == "agents" {
        let parts: usize = args.next().and_then(|n| n.parse().ok()).unwrap_or(0);
        agents(&server, tokens as u64, parts);
    }
    if mode == "reader" {
        reader(&server);
    }
    if mode == "echo" {
        server.respond_for("/v1/chat", move |request| {
            let body = request.json();
            let last = body["messages"]
                .as_array()
                .and_then(|m| m.last())
                .and_then(|m| m["content"].as_str())
                .unwrap_or_default()
                .to_string();
            let mut parts = vec![format!("{last} ")];
            parts.extend((1..tokens).map(|i| format!("w{i} ")));
            let parts: Vec<&str> = parts.iter().map(String::as_str).collect();
            fake_llm::openai::text_stream(&parts)
        });
    }
    let text = fake_llm::openai::long_stream_text(tokens);
    let words: Vec<String> = (0..tokens)
        .map(fake_llm::openai::long_stream_token)
        .collect();
    let parts: Vec<&str> = words.iter().map(String::as_str).collect();
    let reply = match mode.as_str() {
        "json" => fake_llm::openai::text_json(&text),
        "code" => fake_llm::openai::text_stream(CODE_ANSWER),
        "claude" => fake_llm::anthropic::text_stream(&parts),
        "gemini" => fake_llm::gemini::text_stream(&parts),
        "paced" => {
            fake_llm::openai::long_stream(tokens).frame_delay(std::time::Duration::from_millis(5))
        }
        _ => fake_llm::openai::long_stream(tokens),
    };
    if !matches!(mode.as_str(), "agents" | "echo" | "reader") {
        server.set_default(reply);
    }
    println!("{}", server.base_url());
    std::io::stdout().flush().unwrap();
    loop {
        std::thread::park();
    }
}

/// The `reader` mode: see the module docs.
fn reader(server: &fake_llm::FakeLlm) {
    use fake_llm::openai;
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};
    let requests = Arc::new(AtomicUsize::new(0));
    let bytes = Arc::new(AtomicUsize::new(0));
    let calls = Arc::new(AtomicUsize::new(0));
    let (r, b) = (Arc::clone(&requests), Arc::clone(&bytes));
    server.respond_for("/stats", move |_| {
        fake_llm::Reply::json(
            200,
            serde_json::json!({"requests": r.load(Ordering::SeqCst), "bytes": b.load(Ordering::SeqCst)}),
        )
    });
    server.respond_for("/v1/chat", move |request| {
        requests.fetch_add(1, Ordering::SeqCst);
        bytes.fetch_add(request.body_str().len(), Ordering::SeqCst);
        let body = request.json();
        let last = body["messages"]
            .as_array()
            .and_then(|m| m.last())
            .cloned()
            .unwrap_or_default();
        let text = last["content"].as_str().unwrap_or_default();
        if text.starts_with("Summarize the discussion") {
            return openai::text_json("They read the file several times.");
        }
        if last["role"] == "tool" {
            return openai::text_stream(&["It is lorem ipsum."]);
        }
        let id = format!("call_{}", calls.fetch_add(1, Ordering::SeqCst));
        openai::tool_call_stream(&[(&id, "fs_cat", r#"{"path":"notes.txt"}"#)])
    });
}

/// The `agents` mode: see the module docs.
fn agents(server: &fake_llm::FakeLlm, delay_ms: u64, parts: usize) {
    use fake_llm::openai;
    use serde_json::{Value, json};
    server.respond_for("/v1/chat", move |request| {
        let body = request.json();
        let messages = body["messages"].as_array().cloned().unwrap_or_default();
        let system = messages
            .first()
            .and_then(|m| m["content"].as_str())
            .unwrap_or_default()
            .to_string();
        let delay = std::time::Duration::from_millis(delay_ms);
        if system.contains("WORKER") {
            if parts == 0 {
                return openai::text_stream(&["worker done"]).delay_headers(delay);
            }
            let words: Vec<String> = (0..parts).map(|i| format!("w{i} ")).collect();
            let words: Vec<&str> = words.iter().map(String::as_str).collect();
            let gap = delay / u32::try_from(parts).unwrap_or(1).max(1);
            return openai::text_stream(&words).frame_delay(gap);
        }
        let results: Vec<Value> = messages
            .iter()
            .filter(|m| m["role"] == "tool")
            .filter_map(|m| serde_json::from_str(m["content"].as_str()?).ok())
            .collect();
        let task = messages
            .iter()
            .rev()
            .find(|m| m["role"] == "user")
            .and_then(|m| m["content"].as_str())
            .unwrap_or_default();
        let n: usize = task
            .split_whitespace()
            .find_map(|w| w.parse().ok())
            .unwrap_or(1);
        let calls: Vec<(String, String, String)> = if results.is_empty() {
            (0..n)
                .map(|i| {
                    let args = json!({"agent": "worker", "prompt": format!("part {i}")});
                    (
                        format!("s{i}"),
                        "agent__spawn".to_string(),
                        args.to_string(),
                    )
                })
                .collect()
        } else if results.len() == n {
            results
                .iter()
                .enumerate()
                .map(|(i, r)| {
                    let args = json!({"id": r["id"]});
                    (
                        format!("c{i}"),
                        "agent__collect".to_string(),
                        args.to_string(),
                    )
                })
                .collect()
        } else {
            return openai::text_stream(&["done"]);
        };
        let calls: Vec<(&str, &str, &str)> = calls
            .iter()
            .map(|(a, b, c)| (a.as_str(), b.as_str(), c.as_str()))
            .collect();
        openai::tool_call_stream(&calls)
    });
}
